from research_librarian.main import run

run()
