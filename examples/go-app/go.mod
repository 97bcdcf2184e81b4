module github.com/licensing-oss/licensing/examples/go-app

go 1.22

require github.com/licensing-oss/licensing/sdks/go v0.0.0

replace github.com/licensing-oss/licensing/sdks/go => ../../sdks/go
