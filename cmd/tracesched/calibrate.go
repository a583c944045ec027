package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tracesched/tracesched/device"
)

type calibrateOptions struct {
	input  string
	inputs []string // all of them: several captures of one device are pooled
	out    string
	json   bool
	kind   string
	seed   uint64
	behind bool
}

func newCalibrateCmd(ios *IOStreams) *cobra.Command {
	opts := &calibrateOptions{}
	cmd := &cobra.Command{
		Use:   "calibrate INPUT... -o DEVICE.json [--json]",
		Short: "Fit a device timing model to a capture",
		Long: `Calibrate fits a device timing model to the capture's issue-to-complete (D2C) times:
a non-rotational model (service time by operation and size, internal parallelism that
saturates) or a rotational one (seek, rotation, transfer, a sequential fast path), chosen
by cross-validation unless --kind forces one. It prints the fit as DiskSim reports it:
the demerit figure (root-mean-square horizontal distance between the real and the
modelled D2C distributions), also as a fraction of the real mean, measured by driving
the model with the capture's own dispatch times and cross-validated (fitted on the first
half of the capture, scored on the second). Several INPUTs, captures of one device, are
pooled: their requests are laid end to end and fitted as one, so that depths and sizes
one capture lacks are learned from another; the model records what it saw (coverage).`,
		Example: `  $ tracesched calibrate sda -o sda.device.json
  $ tracesched replay --sched bfq --device sda.device.json sda`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.input, opts.inputs = args[0], args
			if opts.out == "" {
				return usagef("calibrate needs -o DEVICE.json")
			}
			if _, err := device.ParseKind(opts.kind); err != nil {
				return usagef("invalid value for --kind: %v", err)
			}
			return calibrateRun(cmd.Context(), ios, opts)
		},
	}
	cmd.Flags().StringVarP(&opts.out, "output", "o", "", "write the model to `FILE` (JSON)")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the fit as JSON")
	cmd.Flags().StringVar(&opts.kind, "kind", "auto", "model `kind`: auto, rotational or nonrotational")
	cmd.Flags().Uint64Var(&opts.seed, "seed", 1, "seed of the model's random draws when scoring")
	cmd.Flags().BoolVar(&opts.behind, "behind", false, "fit the wait of small requests behind large ones where the capture shows them served in order (off by default)")
	return cmd
}

func calibrateRun(ctx context.Context, ios *IOStreams, opts *calibrateOptions) error {
	reqs, cov, dev, err := pooledRequests(ctx, ios, opts.inputs)
	if err != nil {
		return err
	}
	kind, _ := device.ParseKind(opts.kind)
	model, fit, err := device.CalibrateSeq(reqs, device.CalibrateOptions{Kind: kind, Seed: opts.seed, Behind: opts.behind})
	if err != nil {
		return fmt.Errorf("%s: device %s: %w", strings.Join(opts.inputs, ", "), dev, err)
	}
	model.Coverage = cov
	f, err := createAtomic(ctx, ios, opts.out)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := model.Save(f); err != nil {
		return fmt.Errorf("writing %s: %w", opts.out, err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	if opts.json {
		enc := json.NewEncoder(ios.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(fit)
	}
	fmt.Fprintf(ios.Out, "device %s\n%s", dev, fit)
	if s := cov.SustainedSummary(); s != "" {
		fmt.Fprintf(ios.Out, "%s\n", s)
	}
	return nil
}
