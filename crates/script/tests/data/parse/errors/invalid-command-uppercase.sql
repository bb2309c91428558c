\FOO bar
