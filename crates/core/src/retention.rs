//! Retention: delete finished tasks past a cutoff on a schedule (API.md §9).
