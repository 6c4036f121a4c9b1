package web

// ParseUpload is parseUpload, for the fuzz test.
var ParseUpload = parseUpload
