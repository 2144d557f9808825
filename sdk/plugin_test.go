package sdk

import "testing"

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{
		"hashmap": true, "fs-storage-2": true, "0x": true,
		"": false, "-leading": false, "Upper": false, "a_b": false, "a/b": false, "a.b": false, "ü": false,
	} {
		if err := (PluginInfo{Name: name}).CheckName(); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v; want ok=%v", name, err, ok)
		}
	}
}
