"""The reviewer service: living literature reviews (seed 000 literature review + seed 003 citation checking)."""
