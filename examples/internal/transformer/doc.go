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
// char-gpt's model and recipe on a repeated sentence (Example):
//
//	d, err := transformer.NewCharData(strings.Repeat("gelu is smooth. ", 40), "a sentence",
//		datasets.CharTaskConfig{Context: 8, ValFraction: 0.1, Seed: 1, ChunkLen: 64}, 0)
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	cfg := nn.GPTConfig{BlockSize: 8, VocabSize: d.Vocab.Size(), Layers: 1, Heads: 2, Dim: 16}
//	m, gpt, err := transformer.GPTModel(cfg, 16, 1)
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	r := &experiment.Run[string]{Seed: 1, Curve: experiment.NewCurve("val_loss")} // no Dir: no files
//	recipe := transformer.AdamW{Batch: 16, Steps: 150, EvalEvery: 50, Warmup: 10, LR: 2e-2, Clip: 1}
//	if _, err := transformer.TrainAdamW(context.Background(), r, m, d.Train, d.Eval, recipe, nil,
//		func(e train.EvalInfo) error { return r.Curve.Add(e.Step, e.ValLoss) }); err != nil {
//		fmt.Println(err)
//		return
//	}
//	prompt, _ := d.Vocab.Encode("gelu")
//	out, _ := transformer.Continue(gpt, prompt, 20, nn.SampleConfig{Temperature: 0, Seed: 1}) // greedy
//	text, _ := d.Vocab.Decode(out)
//	fmt.Printf("validation loss %.2f → %.2f; %q\n", r.Curve.First("val_loss"), r.Curve.Last("val_loss"), text)
package transformer
