package engine

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"
)

// BenchmarkPrepareImage scales a 12-megapixel phone photo (4000×3000
// JPEG) to the model's 1568 px: the time a picture adds before its turn.
func BenchmarkPrepareImage(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 4000, 3000))
	for y := 0; y < 3000; y += 7 {
		for x := 0; x < 4000; x += 5 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		p, err := prepareImage(data, "image/jpeg")
		if err != nil || len(p.data) == 0 {
			b.Fatal(err)
		}
	}
}
