// Package nn has the layers models are built from, named as in PyTorch:
// Linear, LayerNorm, Embedding, Dropout, the Transformer FeedForward block
// (BERT/GPT/ViT style), an MLP, Sequential composition, losses and accuracy;
// and the Transformer itself: MultiHeadAttention, Block (pre- or post-LN),
// MLPBlock (ungated or GLU/GEGLU/SwiGLU/ReGLU), GPT with nanoGPT's
// state_dict names, and ViT.
//
// A layer is created on a graph.Graph under a name; its parameters get
// PyTorch state_dict names ("fc1.weight", "blocks.0.ffn.ln.bias", ...) and
// PyTorch's layouts (a Linear weight is out×in) and default initializations,
// seeded by the graph. Forward adds the layer to the graph. Activations are
// values of activation.Activation; where a layer takes one, the zero value means
// GELU (exact).
//
//	g, _ := graph.New(tensor.Float32, 1)
//	x, _ := g.Input("x", 256, 768)
//	ffn, _ := nn.NewFeedForward(g, "ffn", nn.FeedForwardConfig{Dim: 768, Hidden: 3072})
//	y, _ := ffn.Forward(x) // x + fc2(gelu(fc1(ln(x))))
//
//	gpt, _ := nn.NewGPT(g, nn.GPTConfig{BlockSize: 64, VocabSize: 65, Layers: 4, Heads: 4, Dim: 128, TieWeights: true})
//	idx, _ := g.Input("idx", 8, 64) // token ids (batch, T)
//	targets, _ := g.Input("targets", 8, 64)
//	logits, loss, _ := gpt.Loss(idx, targets) // (batch·T, vocab), mean cross-entropy
package nn
