from research_correlator.main import run

run()
