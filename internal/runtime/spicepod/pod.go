package spicepod

import (
	"gopkg.in/yaml.v3"
)

var (
	versions = []string{VersionV1Beta1, VersionV1}
	kinds    = []string{KindSpicepod}
)

const onlyDatasets = "this runtime serves datasets and views only; remove it"

var podKeys = keySet{
	known:   []string{"version", "kind", "name", "datasets", "views", "runtime", "secrets"},
	ignored: []string{"metadata"},
	unsupported: map[string]string{
		"models":         onlyDatasets,
		"embeddings":     onlyDatasets,
		"llms":           onlyDatasets,
		"tools":          onlyDatasets,
		"workers":        onlyDatasets,
		"evals":          onlyDatasets,
		"rerankers":      onlyDatasets,
		"search_engines": onlyDatasets,
		"functions":      onlyDatasets,
		"catalogs":       "list each table as a dataset",
		"dependencies":   "copy the datasets of the other spicepod into this file",
		"management":     "remove it",
		"snapshots":      "remove it",
		"extensions":     "remove it",
	},
}

var runtimeKeys = keySet{
	known: []string{"results_cache", "params", "auth", "tls"},
	ignored: []string{
		"task_history", "tracing", "telemetry", "dataset_load_parallelism", "cors",
		"flight", "shutdown_timeout", "ready_state", "output_level", "query",
		"metrics", "scheduler",
	},
	unsupported: map[string]string{
		"caching": "it is the spicepod v2 form; use results_cache",
	},
}

var resultsCacheKeys = keySet{
	known:   []string{"enabled", "cache_max_size", "item_ttl"},
	ignored: []string{"eviction_policy", "cache_key_type", "hashing_algorithm"},
	unsupported: map[string]string{
		"item_expire": "it was renamed item_ttl",
	},
}

// pod decodes the whole file.
func (d *decoder) pod(root *yaml.Node) *Pod {
	o := d.object(root, "", "", podKeys)
	p := &Pod{
		Version: o.enum("version", "", versions...),
		Kind:    o.enum("kind", "", kinds...),
		Name:    o.required("name", "name the spicepod, e.g. name: sample"),
	}
	if !o.has("version") {
		o.failf("version", "is required; write version: v1")
	}
	if !o.has("kind") {
		o.failf("kind", "is required; write kind: Spicepod")
	}
	// Stores first: params of every section may reference them.
	p.Secrets = d.secrets(o.get("secrets"))
	names := &namespace{seen: map[string]string{}}
	p.Datasets = d.datasets(o.get("datasets"), names)
	p.Views = d.views(o.get("views"), names)
	p.Runtime = o.runtime()
	return p
}

// runtime decodes the runtime block, defaults included when it is absent.
func (o *object) runtime() Runtime {
	rt := Runtime{
		ResultsCache: ResultsCache{Enabled: true, CacheMaxSize: DefaultCacheMaxSize, ItemTTL: DefaultItemTTL},
		Params:       map[string]string{},
	}
	c := o.child("runtime", runtimeKeys)
	if c == nil {
		return rt
	}
	rt.Params = c.params("params")
	rt.Auth = c.auth()
	rt.TLS = c.tls()
	rc := c.child("results_cache", resultsCacheKeys)
	if rc == nil {
		return rt
	}
	rt.ResultsCache.Enabled = rc.boolean("enabled", true)
	if s, ok := rc.scalar("cache_max_size"); ok {
		if n, err := ParseByteSize(s); err != nil {
			rc.failf("cache_max_size", "%v", err)
		} else if n == 0 {
			rc.failf("cache_max_size", "must be more than zero; set enabled: false to turn the cache off")
		} else {
			rt.ResultsCache.CacheMaxSize = n
		}
	}
	if rc.has("item_ttl") {
		if ttl := rc.duration("item_ttl"); ttl > 0 {
			rt.ResultsCache.ItemTTL = ttl
		}
	}
	return rt
}
