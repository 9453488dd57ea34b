from research_critic.main import run

run()
