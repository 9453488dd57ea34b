from research_verifier.main import run

run()
