//! Initialisation mode (being written).
