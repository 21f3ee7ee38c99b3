// Package experiment runs the repeated trainings of an experiment and says
// what they show: a grid of settings × seeds trained on one or more
// goroutines, each run kept in its own folder and resumed by fingerprint,
// curves aggregated over seeds into median and min–max bands, paired
// comparisons between settings across seeds, a grid split over workers
// (Slurm job arrays, Kubernetes Indexed Jobs) and merged, and the flags
// experiment programs share.
//
//	grid := experiment.Grid[activation.Activation]{Settings: acts, Seeds: []uint64{1, 2, 3, 4, 5},
//		Name: activation.Activation.Key, Metrics: []string{"train_loss", "val_loss"},
//		Dir: "out/runs", Fingerprint: settings, Resume: true, Workers: 2}
//	runs, err := grid.Run(func(r *experiment.Run[activation.Activation]) error {
//		// build a model with r.Setting and seed r.Seed, then
//		t, _ := train.New(model, opt, trainData, valData, train.Config{Dir: r.Dir,
//			OnEval: func(_ *train.Trainer, e train.EvalInfo) error {
//				return r.Curve.Add(e.Step, e.TrainLoss, e.ValLoss)
//			}})
//		return r.Train(t) // a divergence is recorded in r.Diverged, not returned
//	})
//	groups := experiment.Groups(runs)                 // one per setting, runs in seed order
//	band := groups[1].Band("val_loss")                // median, min, max over seeds per step
//	series := band.Series("GELU", nil)                // a report.Series with the shaded band
//	p := experiment.Compare(groups[1].Final("val_loss"), groups[0].Final("val_loss"))
//	fmt.Println(p.Lower, "of", p.N, "seeds lower, sign test p =", p.P, p.Verdict(0.05))
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
// Kubernetes Indexed Job (ResolveShard, Flags):
//
//	f := experiment.Flags{Out: "out/x", Seed: 1, Seeds: 5, Workers: 2}
//	f.Register(flag.CommandLine, experiment.SeedsFlag|experiment.ResumeFlag|experiment.SubsetFlag|experiment.ShardFlags)
//	flag.Parse()
//	grid.Shard, err = f.ResolveShard(os.Getenv)
//	grid.Merge = f.Merge
//	runs, err := grid.Run(train)
//	if errors.Is(err, experiment.ErrIncomplete) { /* this worker's share is done */ }
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
// plots (on Panel); Product3 lists a grid's settings; Classifier builds
// the MLP classifier most programs train; Splits.Loaders and
// SplitLoaders.Score load and score the train/validation/test splits, and
// TrainSplits trains a run on them recording SplitMetrics; FirstBatch
// draws a seeded first batch; Convert changes element types (token ids
// kept in a run's float64 vectors).
//
// The Transformer programs (examples/char-gpt, examples/vit-mnist) share
// the feed-forward variants by name (MLPs), nn.GPT and nn.ViT as a
// train.Model (GPTModel, ViTModel; CharFFNModel is examples/transformer-ffn's
// attention-free one), nanoGPT's AdamW recipe run as one run
// of a grid (AdamW, TrainAdamW) and the plumbing of a program's main
// (BindFlags, CheckFlags, Flags.Check, CheckNames, NewGrid,
// Flags.Progress, SpeedOf, Exit, and ExitGrid for a grid run in shards).
package experiment
