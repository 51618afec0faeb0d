// Package pyclient runs the Python client's tests and the Python example
// against a real Mneme: its test builds the virtual environment with
// scripts/pyenv.sh, starts the service and runs pytest.
package pyclient
