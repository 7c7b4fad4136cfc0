package bisect

import (
	"context"
	"os"
	"strings"
	"testing"
)

// BenchmarkBisectSimulation prints the bisection table (accuracy and mean
// runs of the noisy search beside plain bisection); it is a table of
// figures, not a timing.
func BenchmarkBisectSimulation(b *testing.B) {
	trials := 1000
	for i := 0; i < b.N; i++ {
		rows, err := SimulateBisection(context.Background(), NoisySearch{}, SimCases(2, 32, 3), trials, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		if err := WriteSimTable(&sb, rows); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			os.Stdout.WriteString(sb.String())
		}
	}
}
