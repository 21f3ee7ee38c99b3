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
// its GPT and its token streams with them directly.
//
//	mlp, err := transformer.ParseMLP("swiglu") // or "mish", once registered with activation.Register
//	cfg.Hidden, cfg.Activation, cfg.Gate = mlp.Block(4 * cfg.Dim) // cfg: an nn.GPTConfig
//	t, err := transformer.TrainNanoGPT(ctx, r, m, trainData, valData, transformer.NanoGPT{Steps: 2000, EvalEvery: 250, Warmup: 100,
//		LR: 1e-3, MinLR: 1e-4, Beta1: 0.9, Beta2: 0.99, WeightDecay: 0.1, Clip: 1}, train.Config{})
package transformer
