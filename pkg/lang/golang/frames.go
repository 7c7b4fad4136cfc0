package golang

// FrameDir is the directory of the package imp in the module at dir,
// relative to its root ("." for the root package, or outside the module):
// go test prints a test's files bare ("x_test.go:12"), as its package's
// directory holds them.
func (Driver) FrameDir(dir, imp string) string {
	mod, _ := Module(dir)
	return pkgDir(mod, imp)
}
