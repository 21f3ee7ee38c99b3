// Package nn has the layers models are built from, named as in PyTorch:
// Linear, LayerNorm, Embedding, Dropout, the Transformer FeedForward block
// (BERT/GPT/ViT style), an MLP, Sequential composition, losses and accuracy.
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
package nn
