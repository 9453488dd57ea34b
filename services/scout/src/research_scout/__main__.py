from research_scout.main import run

run()
