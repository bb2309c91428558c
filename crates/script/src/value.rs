//! (evaluator side: being written)
