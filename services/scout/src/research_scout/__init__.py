"""Scout service (seeds 002 + 004): typed source lists with detail levels, source-type routing,
admin limits, a query-refinement loop, and schedules that keep a list fresh with diffs."""
