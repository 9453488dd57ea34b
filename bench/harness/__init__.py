"""What the benchmarks and the test suite both run on, kept outside tests/ so a benchmark imports
no test module: real servers (`servers`), the services as processes (`stack`), the local
llama.cpp server (`llama_server`), the Grafana dashboards' SQL (`dashboards`, `grafana_macros`),
the privacy probe's routes (`privacy_routes`), and every bench's record: its summary line
appended to `bench/results.jsonl` (`results`) and `docs/benchmarks.md`'s table written from it
(`benchmarks_page`)."""
