"""Arguments as users write them, checked where they are written and made into the options
the native side reads."""
