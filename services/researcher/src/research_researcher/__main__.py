from research_researcher.main import run

run()
