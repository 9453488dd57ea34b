from research_reviewer.main import run

run()
