package policy

// CompileGlob exposes compileGlob to the tests.
var CompileGlob = compileGlob

// Words exposes words to the tests.
var Words = words
