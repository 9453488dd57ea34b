from research_replicator.main import run

run()
