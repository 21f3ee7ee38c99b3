package datasets_test

import (
	"fmt"
	"math"

	"github.com/geluproject/gelu/datasets"
	"gorgonia.org/tensor"
)

// Split a synthetic set, standardize with the training statistics and
// iterate over fixed-size batches.
func ExampleNewLoader() {
	d, _ := datasets.Spirals(datasets.SpiralsConfig{PerClass: 100, Noise: 0.05, Seed: 1})
	train, val, _ := d.Split(0.2, 1)
	stats := train.Standardize()
	_ = val.Apply(stats)

	l, err := datasets.NewLoader(train, datasets.LoaderConfig{BatchSize: 48, Shuffle: true, Seed: 1, Dtype: tensor.Float64})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d training, %d validation examples; %d batches per epoch\n", train.Len(), val.Len(), l.NumBatches())
	for epoch := range 2 {
		for i := range l.NumBatches() {
			b, _ := l.Batch(epoch, i) // valid until the next call
			if i == l.NumBatches()-1 {
				fmt.Printf("epoch %d last batch: X %v, Y %v, %d real rows\n", epoch, b.X.Shape(), b.Y.Shape(), b.Size)
			}
		}
	}
	// Output:
	// 160 training, 40 validation examples; 4 batches per epoch
	// epoch 0 last batch: X (48, 2), Y (48), 16 real rows
	// epoch 1 last batch: X (48, 2), Y (48), 16 real rows
}

// Next-character prediction on Newton's Opticks with 16 characters of
// context.
func ExampleCharTask() {
	train, val, vocab, err := datasets.CharTask(datasets.Opticks(), datasets.CharTaskConfig{Context: 16, ValFraction: 0.1, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d characters, %d training and %d validation windows\n", vocab.Size(), train.Len(), val.Len())

	ids := make([]int, 16)
	for i, x := range train.X[:16] {
		ids[i] = int(x)
	}
	ctx, _ := vocab.Decode(ids)
	fmt.Printf("%q → %q\n", ctx, train.ClassNames[train.Labels[0]])
	// Output:
	// 91 characters, 507694 training and 57120 validation windows
	// "Produced by Suza" → "n"
}

// A teacher network with the exact GELU (pass activation.GELU.F in practice).
func ExampleNewTeacher() {
	gelu := func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) }
	teacher, _ := datasets.NewTeacher(datasets.TeacherConfig{Sizes: []int{8, 32, 1}, Act: gelu, Seed: 1})
	train, _ := teacher.Sample(1000, 0.01, 1)
	test, _ := teacher.Sample(200, 0, 2)
	fmt.Println(train.Len(), train.Features, train.TargetDim, test.Len())
	// Output: 1000 8 1 200
}

// MNIST from the module cache, a validation split, standardization with
// the training statistics, and the batches of two epochs, shuffled anew
// in each. go test compiles this example but does not run it (it has no
// Output comment): reading the 70,000 images and walking two epochs takes
// seconds, half a minute with -race; TestMNIST checks the data.
func ExampleMNIST() {
	train, test, err := datasets.MNIST("")
	if err != nil {
		fmt.Println(err)
		return
	}
	train, val, _ := train.Split(0.1, 1)
	stats := train.StandardizeGlobal()
	val.Apply(stats)
	test.Apply(stats)
	l, _ := datasets.NewLoader(train, datasets.LoaderConfig{BatchSize: 64, Shuffle: true, Seed: 1, DropLast: true})
	for epoch := range 2 {
		for i := range l.NumBatches() {
			b, _ := l.Batch(epoch, i) // b.X: 64×784, b.Y: 64 labels; valid until the next call
			if i == 0 {
				fmt.Println("epoch", epoch, "batch 0:", b.X.Shape(), "labels", b.Labels[:8])
			}
		}
	}
	fmt.Println(train.Len(), val.Len(), test.Len(), l.NumBatches())
}

// nanoGPT's get_batch on a text: the first 90% of its characters for
// training, random windows of 8 ids and the 8 ids after them.
func ExampleNewTokenStream() {
	text := "First Citizen: Before we proceed any further, hear me speak."
	vocab, _ := datasets.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	trainIDs, valIDs, _ := datasets.SplitTokens(ids, 0.1)
	s, _ := datasets.NewTokenStream(trainIDs, datasets.TokenStreamConfig{BatchSize: 2, BlockSize: 8, Seed: 1})
	b, _ := s.Batch(0, 0)
	x, _ := b.Field("x") // x.IDs: 2 windows of 8 ids, y.IDs: the id after each of them
	y, _ := b.Field("y")
	for r := range 2 {
		in, _ := vocab.Decode(x.IDs[r*8 : (r+1)*8])
		next, _ := vocab.Decode(y.IDs[r*8 : (r+1)*8])
		fmt.Printf("%q → %q\n", in, next)
	}
	fmt.Println(len(trainIDs), "training ids,", len(valIDs), "held out,", s.NumBatches(), "batches an epoch")
	// Output:
	// "First Ci" → "irst Cit"
	// " any fur" → "any furt"
	// 54 training ids, 6 held out, 3 batches an epoch
}
