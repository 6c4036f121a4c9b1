package policy

// CompileGlob exposes compileGlob to the tests.
var CompileGlob = compileGlob
