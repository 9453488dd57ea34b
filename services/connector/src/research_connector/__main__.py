from research_connector.main import run

run()
