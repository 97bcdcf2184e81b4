//go:build tools

package tools

import _ "github.com/seaweedfs/seaweedfs/weed"
