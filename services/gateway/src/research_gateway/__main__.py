from research_gateway.main import run

run()
