module github.com/licensing-oss/licensing/sdks/go

go 1.22
