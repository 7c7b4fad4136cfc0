package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"go.uber.org/zap"

	"github.com/redfix/redfix/pkg/config"
)

// commandLine is a command's flags: its own, and --config, which every
// command that reads the configuration takes. The configuration is loaded
// one way for all of them (load).
type commandLine struct {
	*flag.FlagSet
	name   string
	getenv func(string) string
	config *string
}

// newCommandLine starts the flags of the command name, with --config (by
// default REDFIX_CONFIG). getenv is the environment the configuration is
// read from: os.Getenv, but in tests.
func newCommandLine(name string, stderr io.Writer, getenv func(string) string) *commandLine {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &commandLine{FlagSet: fs, name: name, getenv: getenv}
	c.config = fs.String("config", getenv("REDFIX_CONFIG"), "configuration file (also REDFIX_CONFIG)")
	return c
}

// parse parses args, which hold flags only: an argument left over is a
// usage error.
func (c *commandLine) parse(args []string) error {
	if err := c.Parse(args); err != nil {
		return err
	}
	if c.NArg() > 0 {
		return Usage(fmt.Sprintf("%s: unexpected arguments %q", c.name, c.Args()))
	}
	return nil
}

// load reads the configuration (the defaults, the --config file, the
// environment) and builds the process's logger on it, writing to stderr,
// redacted. adjust, when given, changes the configuration first.
func (c *commandLine) load(stderr io.Writer, adjust ...func(*config.Config)) (config.Config, *zap.Logger, error) {
	cfg, err := config.Load(*c.config, c.getenv)
	if err != nil {
		return config.Config{}, nil, err
	}
	for _, a := range adjust {
		a(&cfg)
	}
	log, err := logger(cfg, stderr)
	if err != nil {
		return config.Config{}, nil, err
	}
	logRedisTo(log)
	return cfg, log, nil
}

// asUsage makes an error of the command line or the configuration a usage
// error (exit status 2) of command.
func asUsage(command string, err error) error {
	var ue *UsageError
	if errors.As(err, &ue) || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return Usage(command + ": " + err.Error())
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
