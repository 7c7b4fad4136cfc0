package app

import (
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// buildVersion and buildRevision, when set at link time (an image built
// without its .git: -ldflags "-X github.com/redfix/redfix/pkg/app.buildRevision=SHA"),
// take the place of what the toolchain stamped.
var buildVersion, buildRevision string

// registerBuildInfo exports redfix_build_info{version,revision,goversion} 1,
// from the values set at link time or, without them, the build information
// the Go toolchain stamps into the binary (buildLabels).
func registerBuildInfo(reg prometheus.Registerer) {
	bi, _ := debug.ReadBuildInfo()
	version, revision, goversion := buildLabels(bi, buildVersion, buildRevision)
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "redfix_build_info",
		Help:        "Always 1; the labels name the build: module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": goversion},
	})
	g.Set(1)
	reg.MustRegister(g)
}

// buildLabels chooses redfix_build_info's labels. Values set at link time
// win. Otherwise they come from bi, the build information of the binary:
// the main module's version, and the VCS revision the toolchain stamps
// when it builds in a checkout (vcs.revision; unless -buildvcs=false),
// with "-dirty" when the work tree had uncommitted changes (vcs.modified).
// What neither says is "unknown".
func buildLabels(bi *debug.BuildInfo, linkVersion, linkRevision string) (version, revision, goversion string) {
	version, revision, goversion = "unknown", "unknown", "unknown"
	if bi != nil {
		goversion = bi.GoVersion
		if v := bi.Main.Version; v != "" {
			version = v
		}
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			revision = rev
			if modified {
				revision += "-dirty"
			}
		}
	}
	if linkVersion != "" {
		version = linkVersion
	}
	if linkRevision != "" {
		revision = linkRevision
	}
	if goversion == "" {
		goversion = "unknown"
	}
	return version, revision, goversion
}
