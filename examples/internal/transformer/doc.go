// Package transformer holds what the Transformer example programs
// (examples/char-gpt, examples/vit-mnist, examples/transformer-ffn) share
// and a user's own model does not need: the feed-forward variants by name
// (MLPs, WriteMLPTable), nn.GPT and nn.ViT wrapped as the train.Model
// these programs train (GPTModel validates on the last position of each
// window, as char-gpt's report defines; a model of your own trains with
// datasets.TokenStream and scores every position), their training recipes
// run as one run of an experiment grid (Cosine, TrainCosine, AdamW,
// TrainAdamW), sampling from a trained GPT (Continue), and a character
// task with a seeded sample of its validation windows (CharData).
//
//	m, gpt, err := transformer.GPTModel(cfg, batch, r.Seed)
//	t, err := transformer.TrainAdamW(ctx, r, m, d.Train, d.Eval, transformer.AdamW{Batch: 16, Steps: 400, EvalEvery: 100, Warmup: 40, LR: 8e-3, Clip: 1}, nil, onEval)
package transformer
