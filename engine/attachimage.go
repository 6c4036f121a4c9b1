package engine

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // a GIF's first frame is what the model sees when it is scaled
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // decodes WebP pictures people send
)

// Pictures go to the model no larger than it reads them: a long edge over
// maxImageEdge only costs time, and the API refuses an image block of
// more than 5 MB (base64), so larger encodings are made JPEG.
const (
	maxImageEdge   = 1568
	maxImageBytes  = 3 << 20
	maxImagePixels = 50_000_000 // a 20 MB file may claim far more: not decoded
)

var errTooManyPixels = errors.New("the picture has too many pixels to read")

// isImageType reports whether a sniffed media type is a picture the
// model reads.
func isImageType(mt string) bool {
	switch mt {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// picture is an image ready for a prompt.
type picture struct {
	mediaType string
	data      []byte
}

// prepareImage returns the picture as the model should get it: as it is
// when small enough, else scaled so its long edge is maxImageEdge (JPEG
// stays JPEG; others become PNG, or JPEG when the PNG is still too big).
// An error means it is not a picture that can be read.
func prepareImage(data []byte, mt string) (picture, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return picture{}, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return picture{}, fmt.Errorf("%w (%d×%d)", errTooManyPixels, cfg.Width, cfg.Height)
	}
	if max(cfg.Width, cfg.Height) <= maxImageEdge && len(data) <= maxImageBytes {
		return picture{mediaType: mt, data: data}, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return picture{}, err
	}
	dst := scaleDown(src, maxImageEdge)
	var buf bytes.Buffer
	if mt != "image/jpeg" {
		if err := png.Encode(&buf, dst); err == nil && buf.Len() <= maxImageBytes {
			return picture{mediaType: "image/png", data: buf.Bytes()}, nil
		}
		buf.Reset()
	}
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85}); err != nil {
		return picture{}, err
	}
	return picture{mediaType: "image/jpeg", data: buf.Bytes()}, nil
}

// scaleDown returns src with its long edge at most edge pixels. Catmull-Rom
// keeps the text of a screenshot readable (bilinear aliases when shrinking
// by more than 2×); a 12-megapixel photo takes about 1.5 s on a busy
// 2-core machine (BenchmarkPrepareImage).
func scaleDown(src image.Image, edge int) image.Image {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if max(w, h) <= edge {
		return src
	}
	if w >= h {
		w, h = edge, max(1, h*edge/w)
	} else {
		w, h = max(1, w*edge/h), edge
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	return dst
}
