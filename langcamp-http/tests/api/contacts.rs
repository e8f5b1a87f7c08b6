//! Tests of this resource: filled in by its issue.
