// Runs the shared benchmark workloads (../shared/bench/README.md) and prints RESULT lines.
print("usage: vltava-bench WORKDIR [--only W1,...]")
