// Package optim updates parameters in place from their gradients.
package optim
