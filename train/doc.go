// Package train runs the training loop: epochs over any Data (a
// datasets.Loader, a datasets.TokenStream or a type of your own), forward
// and backward on a graph.Machine, an optim.Optimizer step, evaluation,
// metrics files, checkpoints and a progress display. An MLP learns two
// spirals (ExampleTrainer_Run; Example trains one on MNIST):
//
//	g, _ := graph.New(tensor.Float64, 1)
//	mlp, _ := nn.NewMLP(g, "mlp", nn.MLPConfig{In: 2, Hidden: []int{32, 32}, Out: 2})
//	x, _ := g.Input("x", 40, 2)
//	y, _ := g.Input("y", 40)
//	logits, _ := mlp.Forward(x)
//	loss, _ := nn.CrossEntropyLoss(logits, y)
//
//	data, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 200, Noise: 0.05, Seed: 1})
//	trainSet, valSet, _ := data.Split(0.2, 1)
//	tl, _ := datasets.NewLoader(trainSet, datasets.LoaderConfig{BatchSize: 40, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
//	vl, _ := datasets.NewLoader(valSet, datasets.LoaderConfig{BatchSize: 40, Dtype: tensor.Float64})
//	t, _ := train.New(train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss},
//		&optim.SGD{LearningRate: 0.1, Momentum: 0.9}, tl, vl, train.Config{Epochs: 100, Quiet: true})
//	res, err := t.Run(context.Background())
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	first, last := res.Evals[0], res.Evals[len(res.Evals)-1]
//	fmt.Printf("%d steps: validation loss %.2f after epoch %d, %.2f after epoch %d\n", res.Steps, first.ValLoss, first.Epoch, last.ValLoss, last.Epoch)
//	fmt.Printf("%.0f of %d validation points right\n", last.ValAccuracy*float64(valSet.Len()), valSet.Len())
//
// A batch is a set of named fields (datasets.Field); the trainer binds
// Model.Input to the field "x", Model.Target to "y" and Model.Inputs to
// the fields of their names, so a model takes any number of inputs and
// targets. Integer ids (token ids, class labels) stay ints until they are
// written into the graph's float inputs, where each is checked to be
// exactly representable. A language model trains as nanoGPT's train.py
// does (see Example (CharGPT)): a TokenStream gives (batch × T) input ids
// and the next id of each, the model's loss is the mean cross-entropy over
// every position, and validation scores every position of held-out
// windows by the same measure, skipping targets of −1 (ignore_index).
// Evaluation batches may have any number of rows (Trainer.Evaluate).
//
// Everything is deterministic: the graph's seed fixes the initial weights
// and dropout masks, the data's seed fixes the batches, and metrics files
// hold no wall-clock times, so the same command twice writes
// byte-identical files. Checkpoints (Dir/checkpoint.safetensors) hold the
// parameters under their PyTorch names, the optimizer state under
// "optimizer.<param>.<state>", the position in the data and, when set,
// Model.Args as "model_args"; resuming from one reproduces the
// uninterrupted run exactly. A NaN or ±Inf loss or gradient stops training
// with an error naming the step and tensor before the optimizer touches the
// weights; the last checkpoint stays as it was.
//
// A run ends after its epochs or MaxSteps, when Patience runs out (a
// normal end: the model file is written), or when its context is
// cancelled: then, between two steps, it writes a checkpoint and the model
// file and returns an error wrapping context.Canceled, and a resume
// continues as if nothing had happened; cancelled before its first step,
// it writes neither. Programs cancel on Ctrl-C with
// signal.NotifyContext. Result says where the run started (ResumedAt),
// where it ended (Steps) and its best validation value (Best, BestStep),
// tracked whenever there is validation data.
//
// A Dir that holds a checkpoint or a model is never written over by
// accident: Run refuses it, before writing anything, unless Config.Resume
// (continue it) or Config.Overwrite (start again) says what to do. With
// Resume the console says "resumed from DIR at step N", or "no checkpoint
// in DIR: starting at step 0".
//
// Resuming checks the checkpoint against the run before changing anything:
// its seed, its GradAccum, its model_args, and its position (step = epoch
// × steps per epoch + batch/GradAccum), which must lie within this run's
// Epochs and MaxSteps; the loss count and sum, learning rate, last
// evaluation and best value must be consistent with it; every parameter
// must be there with its shape and dtype and finite values, and the
// optimizer must accept its state (the checkpoint records which optimizer
// wrote it, so that another kind is named as the difference). A checkpoint that fails is refused with
// an error naming the field or tensor, and the model and optimizer keep
// their values. Epochs and MaxSteps may grow, and EvalEvery,
// CheckpointEvery, ClipNorm, Schedule, Patience and the hooks may change
// between runs: they shape what is recorded, not the state. The file
// itself is read as untrusted input (see package safetensors).
//
// A crash at any moment, SIGKILL included, followed by a resume gives the
// files of an uninterrupted run, byte for byte: checkpoints, the model and
// the metrics files' rewrites are atomic (a killed write's temporary file
// is removed by the next write of the same file), and resuming cuts the
// metrics back to what the checkpoint covers, evaluations included, so an
// evaluation flushed just before the crash is neither lost nor repeated.
//
// Data-parallel training (Config.Comm, package train/dist) runs the same
// program as N processes, the ranks of an MPI job (mpirun -np N, or srun
// --mpi=pmix under Slurm). Every rank is given the same data and settings
// and builds the model with its share of a global batch's rows (as
// Example (DataParallel) does, run there as a process alone):
//
//	c, err := dist.Open(false) // true for a -dist flag; under mpirun, the job's ranks anyway
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer c.Close()
//	const batch = 40 // the global batch
//	lo, hi, _ := dist.Shard(batch, c.Rank(), c.Size())
//	model := spiralsMLP(hi - lo) // the graph's rows: this rank's share
//	trainData, valData := spirals(batch)
//	t, err := train.New(model, &optim.SGD{LearningRate: 0.1, Momentum: 0.9}, trainData, valData,
//		train.Config{Epochs: 100, Quiet: true, Comm: c})
//	if err != nil {
//		log.Fatal(err)
//	}
//	res, err := t.Run(context.Background())
//	if err != nil {
//		log.Fatal(err) // the same error on every rank
//	}
//	last := res.Evals[len(res.Evals)-1]
//	fmt.Printf("%d steps, %.0f%% of the validation points right\n", res.Steps, 100*last.ValAccuracy)
//
// The trainer cuts each global batch into the ranks' contiguous shares,
// averages the gradients and the loss over the ranks before every step
// (each rank weighted by its rows), and so takes the steps one process
// takes on whole batches, up to the rounding of another order of
// summation; with Config.Reduce.Deterministic bit for bit those of one
// process that accumulates the shares as micro-batches (batches of the
// share's rows, GradAccum = N). GradAccum composes with it. Dropout masks
// are keyed to the rank as well as the step, as that process draws them
// for its micro-batches; one process on whole batches draws other masks,
// so with dropout the equality with it holds in distribution, not step
// by step. Evaluation is sharded by batches and reduced, the same result
// on every rank. Rank 0 alone writes files and prints; with Resume every
// rank reads the checkpoint, so Dir must be on a file system every rank
// sees. The ranks check at start
// that they have the same model, data (sizes, and a hash of the first and
// last batch of each set) and settings and start from the same state, and
// every ParamCheckEvery steps that their parameters are still identical.
// A rank that fails alone (a batch it cannot read, a NaN, a file rank 0
// cannot write, a hook's error, a cancelled context) stops every rank at
// the same step, with the same error; a rank that dies ends the job
// (mpirun ends the others). The hooks run on every rank.
//
// Files in Dir:
//
//	steps.csv, steps.jsonl     per step: step, epoch, batch, loss, lr, grad_norm
//	evals.csv, evals.jsonl     per evaluation: step, epoch, train_loss, val_loss, val_accuracy
//	checkpoint.safetensors     the latest checkpoint
//	best.safetensors           with SaveBest: the weights of the best evaluation
//	model.safetensors          the final weights
//
// With Model.Module set, best.safetensors and model.safetensors hold the
// module's PyTorch state dict, as SaveWeights writes it (names relative to
// the module; a GPT's tied lm_head.weight copy, and with Model.StateDict =
// nn.CausalMaskBuffers() nanoGPT's torch 1.x masks), which the PyTorch
// model's strict load_state_dict reads as it is; without it, every
// parameter of the graph under its graph name. LoadWeights reads either
// into the module.
//
// Epochs and batches count from 0 in the files, the hooks and on the
// console alike. A value not measured is an empty CSV cell and a JSON
// null (and "–" on the console): the train loss of an evaluation with no
// step since the previous one (at step 0), the validation values without
// validation data, the accuracy of a regression. A measured value that is
// not finite is NaN, +Inf or -Inf in CSV and null in JSON. grad_norm is
// the global L2 norm of the gradient before clipping, measured by
// optim.ClipGradNorm whether or not it clips. The console shows the
// throughput in tokens/s for a model of sequences of ids, samples/s
// otherwise.
//
// The packages below train are layers of their own, each importing only
// downwards:
//
//	train/safetensors  the file format (below train: train uses it)
//	train/report       an experiment's output folder (CSV, summary.json,
//	                   plots, report.md); a leaf that imports nothing of
//	                   the project
//	train/probe        above train: measurements inside a training network,
//	                   taking train's own step (Gradients)
//	train/experiment   above train and report: grids of settings × seeds
package train
