// Package transformer holds what the Transformer example programs
// (examples/char-gpt, examples/vit-mnist, examples/transformer-ffn) share
// and a user's own model does not need: the feed-forward variants by name
// (MLPs, ParseMLP, which also takes any activation as an ungated MLP,
// WriteMLPTable), nn.ViT wrapped as the train.Model vit-mnist trains, the
// training recipes run as one run of an experiment grid (Cosine,
// TrainCosine, AdamW, TrainAdamW, and nanoGPT's, NanoGPT and
// TrainNanoGPT), sampling from a trained GPT (Continue), and a character
// task with a seeded sample of its validation windows (CharData). A model
// of your own needs only nn, optim, datasets and train: char-gpt builds
// its GPT and its token streams with them directly. On a repeated sentence
// (Example):
//
//	vocab, _ := datasets.NewCharVocab("gelu is smooth. ")
//	ids, _ := vocab.Encode(strings.Repeat("gelu is smooth. ", 40))
//	trainData, _ := datasets.NewTokenStream(ids, datasets.TokenStreamConfig{BatchSize: 8, BlockSize: 16, Seed: 1})
//	valData, _ := datasets.NewTokenStream(ids[:160], datasets.TokenStreamConfig{BatchSize: 8, BlockSize: 16, Tile: true})
//	mlp, err := transformer.ParseMLP("swiglu") // or "mish", once registered with activation.Register
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	cfg := nn.GPTConfig{BlockSize: 16, VocabSize: vocab.Size(), Layers: 1, Heads: 2, Dim: 16, NoBias: true}
//	cfg.Hidden, cfg.Activation, cfg.Gate = mlp.Block(4 * cfg.Dim)
//	g, _ := graph.New(tensor.Float32, 1)
//	gpt, _ := nn.NewGPT(g, "", cfg)
//	x, _ := g.Input("x", 8, 16)
//	y, _ := g.Input("y", 8, 16)
//	logits, loss, _ := gpt.Loss(x, y)
//	m := train.Model{Graph: g, Input: x, Target: y, Output: logits, Loss: loss, Module: gpt}
//	r := &experiment.Run[string]{Seed: 1, Curve: experiment.NewCurve("val_loss")} // no Dir: no files
//	recipe := transformer.NanoGPT{Steps: 150, EvalEvery: 50, Warmup: 10, LR: 1e-2, MinLR: 1e-3, Beta1: 0.9, Beta2: 0.99, WeightDecay: 0.1, Clip: 1}
//	if _, err := transformer.TrainNanoGPT(context.Background(), r, m, trainData, valData, recipe,
//		train.Config{Quiet: true, OnEval: func(_ *train.Trainer, e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }}); err != nil {
//		fmt.Println(err)
//		return
//	}
//	prompt, _ := vocab.Encode("gelu")
//	out, _ := transformer.Continue(gpt, prompt, 20, nn.SampleConfig{Temperature: 0, Seed: 1}) // greedy
//	text, _ := vocab.Decode(out)
//	fmt.Printf("validation loss %.2f → %.2f; %q\n", r.Curve.First("val_loss"), r.Curve.Last("val_loss"), text)
package transformer
