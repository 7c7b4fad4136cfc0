package golang

import "strings"

// IsPackagePattern reports an argument the go command takes for packages
// though it names no one package of the module: ".", "./...", "./cmd/x",
// "x/...", or an import path (one that names no test function).
func (Driver) IsPackagePattern(a string) bool {
	if a == "" || strings.Contains(a, "::") || strings.Contains(a, " ") {
		return false
	}
	if a == "." || strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasSuffix(a, "/...") {
		return true
	}
	if strings.HasPrefix(a, "Test") || strings.HasPrefix(a, "Example") {
		return false
	}
	return !strings.Contains(a, ".Test") && !strings.Contains(a, ".Example")
}
