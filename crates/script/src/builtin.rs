//! (parser side: being written)
