package testenv

import (
	"fmt"
	"slices"
	"strings"
)

// Allowed are the variables a repository names for its tests that are
// known and wanted: the time zone and locale, CI's and colour's switches,
// and the interpreters' variables that change how tests behave, not where
// code or caches come from. Any other name must be a plain upper-case
// name that neither looks like a credential's nor steers redfix's tools
// or the sandbox (see CheckName).
var Allowed = []string{
	"TZ", "LANG", "LANGUAGE", "LC_*",
	"CI", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "NODE_ENV",
	"PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONFAULTHANDLER",
}

// secretWords make a name look like a credential's, as a whole word of
// it (split at "_"); secretParts anywhere in it.
var (
	secretWords = []string{"KEY", "KEYS", "PASS", "PWD", "AUTH", "COOKIE", "SESSION", "CREDS", "DSN", "JWT", "BEARER", "OAUTH", "SALT", "SIGNING", "CERT", "PRIVATE"}
	secretParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "ACCESSKEY", "PRIVATEKEY", "AUTHORIZATION"}
)

// controlNames and controlPrefixes are variables that redfix or the
// sandbox sets, or that steer the tools running the tests rather than the
// tests: where programs, modules and caches come from, the shell, the
// dynamic loader, proxies and certificates, the package managers, git.
var (
	controlNames = []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "TEMPDIR",
		"IFS", "ENV", "CDPATH", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GLOBIGNORE",
		"VIRTUAL_ENV", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	}
	controlPrefixes = []string{
		"LD_", "DYLD_", "GO", "CGO_", "GIT_", "PYTHON", "PIP_", "PYTEST_", "COVERAGE_", "COV_CORE_", "VIRTUALENV_",
		"NODE_", "NPM_", "YARN_", "PNPM_", "COREPACK_", "REDFIX_", "XDG_", "SSL_", "BASH_", "UV_", "CONDA_",
	}
)

// CheckName refuses a variable's name a repository may not set for its
// tests, saying why: not a plain name, a credential's look, or a variable
// that steers redfix's tools or the sandbox. The names of Allowed pass.
func CheckName(name string) error {
	if len(name) == 0 || len(name) > MaxNameBytes || !plainName(name) {
		return fmt.Errorf("%q is not a plain variable name (A-Z, 0-9 and '_', starting with a letter, at most %d)", name, MaxNameBytes)
	}
	if why := secretLooking(name); why != "" {
		return fmt.Errorf("%s looks like a credential's name (%s): a repository's tests never get credentials through redfix, and their environment is shown in the task's evidence", name, why)
	}
	for _, a := range Allowed {
		if a == name || strings.HasSuffix(a, "*") && strings.HasPrefix(name, strings.TrimSuffix(a, "*")) {
			return nil
		}
	}
	if slices.Contains(controlNames, name) || strings.HasSuffix(name, "_PROXY") {
		return fmt.Errorf("%s is set by redfix or the sandbox, or steers where programs, modules, caches or connections come from: a repository cannot set it", name)
	}
	for _, p := range controlPrefixes {
		if strings.HasPrefix(name, p) {
			return fmt.Errorf("%s (%s…) belongs to a tool redfix runs the tests with, or to the sandbox: a repository cannot set it (allowed: %s, and other plain names)", name, p, strings.Join(Allowed, ", "))
		}
	}
	return nil
}

// plainName: upper-case letters, digits and '_', starting with a letter.
func plainName(s string) bool {
	for i, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
		case i > 0 && (c == '_' || c >= '0' && c <= '9'):
		default:
			return false
		}
	}
	return true
}

// secretLooking says which part of name makes it look like a credential's,
// or "".
func secretLooking(name string) string {
	for _, p := range secretParts {
		if strings.Contains(name, p) {
			return "it has " + p
		}
	}
	for _, w := range strings.Split(name, "_") {
		if slices.Contains(secretWords, w) {
			return "it has the word " + w
		}
	}
	return ""
}
