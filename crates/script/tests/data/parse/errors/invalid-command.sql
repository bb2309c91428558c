\foo
