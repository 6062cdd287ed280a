/// The JSON schema of a scenario file (`lab schema`; docs/scenario.schema.json is its output
/// for the built-in catalog, which `ScenarioSchemaTests` checks). The plugin names come from
/// the catalog, so a `lab` with plugins added describes the scenarios it takes.
package enum ScenarioSchema {
    /// The schema with `{{kind}}` where the catalog's names go.
    package static let template = #"""
{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "crypto-lab scenario",
  "description": "A scenario for `lab run` (docs/scenarios.md). The lab checks more than this schema can say (suites a provider cannot do, thresholds naming steps that do not exist, one load model's keys in another's); the schema is for editors and independent checks. Every object is closed: a misspelled key fails.",
  "type": "object",
  "additionalProperties": false,
  "required": ["name", "flows"],
  "properties": {
    "$schema": { "type": "string" },
    "name": { "type": "string", "pattern": "^[A-Za-z0-9._-]{1,64}$" },
    "description": { "type": "string" },
    "seed": { "type": "integer", "minimum": 0 },
    "server": { "$ref": "#/$defs/server" },
    "clients": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "count": { "type": "integer", "minimum": 1, "maximum": 100000 },
        "rampUp": { "$ref": "#/$defs/duration" }
      }
    },
    "load": { "$ref": "#/$defs/load" },
    "flows": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/flow" } },
    "thresholds": {
      "description": "Metric → condition: errors, <flow>.errors, <flow>.<step>.<stat> with stats count, min, p50, p90, p95, p99, p99.9, max, mean, stddev, ops; outcomes.<name>, <flow>.outcomes.<name>, <flow>.bytes.<direction>, <flow>.<step>.bytes.<direction> (docs/scenarios.md, Thresholds).",
      "type": "object",
      "propertyNames": { "pattern": "^[A-Za-z0-9._{},=-]+$" },
      "additionalProperties": {
        "type": "string",
        "pattern": "^\\s*(<=|>=|==|!=|<|>)\\s*[0-9]+(\\.[0-9]+)?\\s*(%|ns|us|µs|ms|s|sec|m|min|h|/s|B|kB|KB|KiB|MB|MiB)?\\s*$"
      }
    },
    "report": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "formats": {
          "type": "array",
          "items": { "enum": {{reporters}} }
        },
        "charts": { "type": "boolean" },
        "stepUsage": {
          "description": "Read each step's thread CPU time and preemption (system calls inside the exchange's time).",
          "type": "boolean"
        },
        "packets": {
          "description": "Read the kernel's TCP counters (TCP_INFO) around each round trip over a socket: segments each way and retransmissions, by step.",
          "type": "boolean"
        },
        "matrixMetric": {
          "description": "The figure a matrix's chart draws against its parameter: <step>.<stat> as in thresholds (default exchange.p50) or bytes.<direction>.",
          "type": "string"
        },
        "interval": {
          "description": "The width of the run's intervals (results.json's intervals, timeseries.csv, the over-time chart): 100 ms to 1 h, default 1 s; 0 keeps none.",
          "$ref": "#/$defs/duration"
        }
      }
    }
  },
  "$defs": {
    "duration": {
      "description": "A duration with its unit, or several terms from the largest unit down: \"250 ms\", \"2s\", \"30 min\", \"1m30s\"; \"0\" alone.",
      "type": "string",
      "pattern": "^\\s*(0|([0-9]+(\\.[0-9]+)?\\s*(ns|us|µs|ms|s|sec|m|min|h)\\s*)+)$"
    },
    "hostPort": { "type": "string", "pattern": "^.+:[0-9]{1,5}$" },
    "keyLifetime": { "enum": ["per-run", "per-exchange", "fixed"] },
    "provider": { "enum": {{providers}} },
    "server": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "transport": { "enum": {{transports}} },
        "provider": { "$ref": "#/$defs/provider" },
        "keys": { "$ref": "#/$defs/keyLifetime" },
        "framing": { "enum": ["u32be", "u64le"] },
        "maxFrameBytes": { "type": "integer", "minimum": 1, "maximum": 2147483647 },
        "listen": { "$ref": "#/$defs/hostPort" },
        "address": { "$ref": "#/$defs/hostPort" },
        "discover": { "type": "string", "pattern": "^_[A-Za-z0-9-]+\\._(tcp|udp)$" },
        "instance": { "type": "string", "minLength": 1 },
        "discoveryTimeout": { "$ref": "#/$defs/duration" },
        "idleTimeout": { "$ref": "#/$defs/duration" },
        "tls": {
          "type": "object",
          "additionalProperties": false,
          "properties": {
            "certificate": { "type": "string", "minLength": 1 },
            "key": { "type": "string", "minLength": 1 },
            "pin": {
              "type": "object",
              "additionalProperties": false,
              "properties": {
                "certificate": { "type": "string", "minLength": 1 },
                "spkiSHA256": { "type": "string", "minLength": 1 }
              }
            },
            "groups": {
              "type": "array",
              "minItems": 1,
              "uniqueItems": true,
              "items": { "enum": ["x25519", "secp256r1", "secp384r1", "x25519-mlkem768"] }
            },
            "version": { "enum": ["1.2", "1.3"] }
          }
        },
        "database": { "type": "string", "minLength": 1 },
        "serverStats": { "type": "boolean" }
      },
      "not": { "required": ["address", "discover"] }
    },
    "load": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "model": { "enum": ["closed", "open", "idle"] },
        "iterations": { "type": "integer", "minimum": 1, "maximum": 100000000 },
        "warmupIterations": { "type": "integer", "minimum": 0, "maximum": 1000000 },
        "rounds": { "type": "integer", "minimum": 1, "maximum": 1000 },
        "rate": {
          "description": "Open model: new exchanges per second, or a share of what the same clients carry back to back, found by a 1 s closed probe before the run.",
          "oneOf": [
            { "type": "number", "exclusiveMinimum": 0, "maximum": 1000000 },
            { "type": "string", "pattern": "^(100|[1-9][0-9]?|0\\.[0-9]*[1-9][0-9]*|[1-9][0-9]?\\.[0-9]+)% of capacity$" }
          ]
        },
        "duration": { "$ref": "#/$defs/duration" },
        "warmup": { "$ref": "#/$defs/duration" },
        "stages": {
          "description": "Plateaus one after another (after the warm-up, at the first stage's rate or clients), each a whole number of report.interval: open model, {rate, duration} instead of rate and duration; closed model, {clients, duration} instead of iterations.",
          "type": "array",
          "minItems": 1,
          "maxItems": 100,
          "items": {
            "type": "object",
            "additionalProperties": false,
            "required": ["duration"],
            "properties": {
              "rate": { "type": "number", "exclusiveMinimum": 0, "maximum": 1000000 },
              "clients": { "type": "integer", "minimum": 1, "maximum": 100000 },
              "duration": { "$ref": "#/$defs/duration" }
            },
            "oneOf": [{ "required": ["rate"] }, { "required": ["clients"] }]
          }
        },
        "kneeP99": {
          "description": "With stages: the p99 a sustained stage stays under; the capacity report's knee is where stages stop being sustained.",
          "$ref": "#/$defs/duration"
        },
        "deadline": { "$ref": "#/$defs/duration" }
      },
      "allOf": [
        {
          "if": { "properties": { "model": { "const": "open" } }, "required": ["model"] },
          "then": {
            "oneOf": [
              { "required": ["rate", "duration"], "not": { "required": ["stages"] } },
              { "required": ["stages"], "not": { "anyOf": [{ "required": ["rate"] }, { "required": ["duration"] }] } }
            ]
          },
          "else": {
            "if": { "required": ["stages"] },
            "then": { "not": { "anyOf": [{ "required": ["iterations"] }, { "required": ["warmupIterations"] }, { "required": ["rounds"] }] } },
            "else": { "not": { "anyOf": [{ "required": ["kneeP99"] }, { "required": ["warmup"] }] } }
          }
        },
        {
          "if": { "properties": { "model": { "const": "idle" } }, "required": ["model"] },
          "then": { "required": ["duration"] }
        }
      ]
    },
    "flow": {
      "type": "object",
      "required": ["flow"],
      "properties": {
        "flow": { "enum": {{flows}} },
        "name": { "type": "string", "pattern": "^[A-Za-z0-9_-]+$" },
        "weight": { "type": "integer", "minimum": 1, "maximum": 1000000 },
        "suite": { "enum": {{suites}} },
        "provider": { "$ref": "#/$defs/provider" },
        "clientProvider": { "$ref": "#/$defs/provider" },
        "options": { "type": "object" },
        "matrix": {
          "description": "Parameters to vary: the entry stands for one entry per combination, each a group of its own labelled <name or flow>-<value>-…; exclude leaves combinations out.",
          "type": "object",
          "minProperties": 1,
          "properties": {
            "exclude": {
              "description": "Partial combinations to leave out, e.g. [{\"suite\": \"pq\", \"provider\": \"openssl\"}]: every combination with those values.",
              "type": "array",
              "minItems": 1,
              "items": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": { "pattern": "^(suite|provider|clientProvider|options\\.[A-Za-z0-9_]+)$" }
              }
            }
          },
          "propertyNames": { "pattern": "^(exclude|suite|provider|clientProvider|options\\.[A-Za-z0-9_]+)$" },
          "additionalProperties": { "type": "array", "minItems": 1, "uniqueItems": true }
        }
      },
      "additionalProperties": false,
      "allOf": [
        {
          "if": { "properties": { "flow": { "const": "cx" } } },
          "then": { "properties": { "options": { "$ref": "#/$defs/cxOptions" } } },
          "else": { "properties": { "options": { "$ref": "#/$defs/messagingOptions" } } }
        },
        {
          "if": { "properties": { "flow": { "const": "lockout" } } },
          "then": {
            "properties": {
              "options": {
                "properties": {
                  "maxAttempts": { "type": "integer", "minimum": 1, "maximum": 1000 },
                  "waitOut": { "type": "boolean" },
                  "untilLocked": { "type": "boolean" }
                }
              }
            }
          }
        },
        {
          "if": { "properties": { "flow": { "const": "chat" } } },
          "then": {
            "properties": {
              "options": {
                "properties": {
                  "messageBytes": { "type": "integer", "minimum": 1, "maximum": 60000 },
                  "secretLog": { "type": "string" }
                }
              }
            }
          }
        },
        {
          "if": { "properties": { "flow": { "const": "rekey" } } },
          "then": {
            "properties": {
              "options": {
                "properties": {
                  "history": { "type": "integer", "minimum": 1, "maximum": 20000 },
                  "messageBytes": { "type": "integer", "minimum": 1, "maximum": 4096 }
                }
              }
            }
          }
        }
      ]
    },
    "cxOptions": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "rsaBits": { "type": "integer", "minimum": 512 },
        "legacy": { "type": "boolean" },
        "payloadBytes": { "type": "integer", "minimum": 1, "maximum": 4194304 },
        "clientKeys": { "$ref": "#/$defs/keyLifetime" },
        "stall": {
          "type": "object",
          "additionalProperties": false,
          "required": ["after", "duration"],
          "properties": { "after": { "$ref": "#/$defs/duration" }, "duration": { "$ref": "#/$defs/duration" } }
        }
      }
    },
    "messagingOptions": {
      "description": "The messaging service's settings (docs/messaging.md), and each flow's own keys, which the allOf above types: lockout's maxAttempts, waitOut, untilLocked; chat's messageBytes, secretLog; rekey's history, messageBytes.",
      "type": "object",
      "properties": {
{{messagingKinds}}
        "minPasswordLength": { "type": "integer", "minimum": 1, "maximum": 128 },
        "hpke": { "enum": ["x25519", "xwing"] },
        "maxAttempts": true,
        "waitOut": true,
        "untilLocked": true,
        "messageBytes": true,
        "secretLog": true,
        "history": true
      },
      "additionalProperties": false
    }
  }
}
"""#
}
