"""What more than one view uses: the help, the prompt inspector, the question line, forks."""
