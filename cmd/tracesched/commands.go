package main

import "github.com/spf13/cobra"

// subcommands returns the commands of tracesched.
func subcommands(ios *IOStreams) []*cobra.Command {
	return []*cobra.Command{
		newStatsCmd(ios),
		newConvertCmd(ios),
		newCalibrateCmd(ios),
		newProbeCmd(ios),
		newReplayCmd(ios),
		newDiffCmd(ios),
		newReportCmd(ios),
		newTUICmd(ios),
		newRecordCmd(ios),
		newManifestCmd(ios),
	}
}
