// Package experiment runs the repeated trainings of an experiment and says
// what they show: a grid of settings × seeds trained on one or more
// goroutines, each run kept in its own folder and resumed by fingerprint,
// curves aggregated over seeds into median and min–max bands, paired
// comparisons between settings across seeds, a grid split over workers
// (Slurm job arrays, Kubernetes Indexed Jobs) and merged, and the flags
// experiment programs share. Two learning rates of a noisy descent, five
// paired seeds each (Example; Example_train trains networks with
// train.Trainer in the same way, returning r.Train(ctx, t) from the
// function):
//
//	grid := experiment.Grid[float64]{Settings: []float64{0.05, 0.2}, Seeds: []uint64{1, 2, 3, 4, 5},
//		Name: func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, Metrics: []string{"loss"}}
//	runs, err := grid.Run(func(r *experiment.Run[float64]) error {
//		g := rng.New(r.Seed, "toy") // the start and the noise, the same for both rates
//		w := g.Normal()
//		for step := 1; step <= 20; step++ {
//			w -= r.Setting * (2*(w-3) + g.Normal()) // a noisy gradient step on (w − 3)²
//			if err := r.Curve.Add(step, (w-3)*(w-3)); err != nil {
//				return err
//			}
//		}
//		return nil
//	})
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	groups := experiment.Groups(runs) // one per setting, runs in seed order
//	for _, g := range groups {
//		b := g.Band("loss") // median, min, max over seeds per step; b.Series plots it
//		fmt.Printf("%s: median loss at step %d: %.3f (seeds from %.3f to %.3f)\n", g.Name, b.Steps[9], b.Median[9], b.Min[9], b.Max[9])
//	}
//	p := experiment.Compare(groups[1].Final("loss"), groups[0].Final("loss"))
//	fmt.Printf("lr 0.2 lower in %d of %d seeds: p = %.4f, %s\n", p.Lower, p.N, p.P, p.Verdict(0.05))
//
// Runs are independent: each builds its own graph, loaders and optimizer
// from its setting and seed, so results and their order do not depend on
// Workers. (OpenBLAS's results do depend on its thread count, so Grid.Run
// sets one BLAS thread, whatever Workers is: programs do not.)
//
// A run with Grid.Dir set keeps its files in Dir/<setting name>/seed<n>:
// whatever the program writes there (train.Config.Dir), and, once the run
// has finished, curve.csv and run.json. With Resume, a later Grid.Run reads
// a finished run back instead of training it when run.json's fingerprint
// (Grid.Fingerprint, the setting's name, the seed and the metric names)
// matches, so an interrupted experiment continues where it stopped.
//
// A grid can be split over workers that share only Dir (Grid.Shard):
// worker i of n trains the runs at positions i, i+n, i+2n, … of the grid's
// order, each into its own folder, whose run.json (written last, through a
// temporary file with a name unique to the writer, then renamed) vouches
// for it. Before any run starts, the first worker records the grid and the
// shard count in Dir/grid.json, and every other worker checks it: a worker
// given another count, or a folder holding another grid's runs, is an
// error. A worker resumes its own finished runs, never touches another's
// (a run without run.json is unfinished, not stale), and when it finds
// every run finished it claims the report in Dir/reporter.json, created
// once: the worker that claims it first returns every run and so makes the
// report, exactly one however close together the workers finish; the
// others return an *IncompleteError (ErrIncomplete), naming the claimant
// once the grid is complete. The claimant started again makes it again; a
// worker with a run to train withdraws the claim, as the results change.
// Grid.Merge reads every run without training. A merge, or a worker,
// refuses a Dir holding folders that are no run of the grid (other seeds,
// other settings), naming them, as the report would leave them out. The runs, and so any report
// made from them, are the same whether the grid ran in one process or in
// shards. Programs take the shard from -shard i/n, a Slurm job array or a
// Kubernetes Indexed Job (ResolveShard, Flags). Two workers of one grid,
// run here one after the other (Example_shard):
//
//	dir, _ := os.MkdirTemp("", "shards")
//	defer os.RemoveAll(dir)
//	for _, args := range [][]string{{"-shard", "0/2"}, {"-shard", "1/2"}} { // the workers' command lines
//		f := experiment.Flags{Out: dir, Seed: 1, Seeds: 5, Workers: 1}
//		fs := flag.NewFlagSet("prog", flag.ContinueOnError)
//		f.Register(fs, experiment.SeedsFlag|experiment.ResumeFlag|experiment.ShardFlags)
//		fs.Parse(args)
//		grid := experiment.NewGrid(f, []float64{0.05, 0.2}, func(lr float64) string { return fmt.Sprintf("lr%g", lr) }, "loss")
//		shard, err := f.ResolveShard(os.Getenv) // -shard, else a Slurm array or Indexed Job, else the whole grid
//		if err != nil {
//			fmt.Println(err)
//			return
//		}
//		grid.Shard = shard
//		grid.Merge = f.Merge
//		runs, err := grid.Run(func(r *experiment.Run[float64]) error { return r.Curve.Add(1, r.Setting*float64(r.Seed)) })
//		switch {
//		case errors.Is(err, experiment.ErrIncomplete): // this worker's share is done
//			fmt.Println(args[1], "done:", err)
//		case err != nil:
//			fmt.Println(err)
//			return
//		default:
//			fmt.Println(args[1], "done:", len(runs), "runs, the report can be made")
//		}
//	}
//
// Statistics over seeds ignore non-finite values (a diverged run) and use
// one definition of the median and quantiles, report.Quantiles's (linear
// interpolation between order statistics). Compare's sign test is exact:
// P(X ≥ k) for X ~ Binomial(n, ½), the probability of k or more of n
// paired seeds favouring one side by chance; with five seeds all agreeing
// it is 1/32, the fewest seeds that reach p < 0.05 (MinPairs); AllLower
// checks "every setting in A is lower than every one in B". When the runs
// also score the same evaluation examples one by one, DiffFrom separates
// the two kinds of noise: each seed's difference carries its evaluation
// noise (a block standard error), the seeds carry the spread between
// trainings; DiffsFromFirst tabulates it per seed against the first group.
// When one group per family is reported (Best), FindGroup, Only and
// SelectionTable look the groups up and show the choice, and Comparisons
// compares two of them seed by seed and records the sign test.
// FinalTable writes the final table with its summary keys, BestTable the
// best run per row and column, LossErrorPanels one family's loss and error
// plots (on Panel); Product3 lists a grid's settings; Splits.Loaders and
// SplitLoaders.Score load and score the train/validation/test splits, and
// TrainSplits trains a run on them recording SplitMetrics; Convert changes
// element types (token ids kept in a run's float64 vectors). The plumbing
// of a program's main: BindFlags, CheckFlags, Flags.Check, CheckNames,
// NewGrid, Flags.Progress, SpeedOf, Main and Exit, and ExitGrid for a grid
// run in shards.
//
// Models, training recipes and data of particular programs are theirs:
// the example programs keep them in examples/internal (the Transformer
// variants and nanoGPT's recipe, the MNIST MLP classifier). A model of
// your own needs only nn, optim, datasets and train.
package experiment
