# rukh's containment init for linux/amd64: PID 1 of an invocation's PID
# namespace. argv: [rukh-init, program, args...]; envp is passed on.
# Descriptor 4 is the report pipe (kernel/initproto.go). It touches no
# mount: it may share the host's mount namespace.
	.text
	.globl _start
_start:
	mov	(%rsp), %rdi		# argc
	lea	8(%rsp), %r12		# argv
	lea	8(%r12,%rdi,8), %r13	# envp
	sub	$16, %rsp		# record: kind at 0(%rsp), value at 4(%rsp)
	cmp	$2, %rdi
	jl	done			# nothing to run: the namespace probe
	mov	$72, %eax		# fcntl(4, F_SETFD, FD_CLOEXEC)
	mov	$4, %edi
	mov	$2, %esi
	mov	$1, %edx
	syscall
	mov	$57, %eax		# fork
	syscall
	test	%rax, %rax
	js	forkfailed
	jz	child
	mov	%rax, %r14		# the program's pid
reap:
	mov	$61, %eax		# wait4(-1, &status, 0, 0)
	mov	$-1, %rdi
	lea	4(%rsp), %rsi
	xor	%edx, %edx
	xor	%r10d, %r10d
	syscall
	cmp	$-4, %rax		# EINTR
	je	reap
	test	%rax, %rax
	js	done			# ECHILD: cannot happen while the program lives
	cmp	%r14, %rax
	jne	reap
	movl	$1, (%rsp)		# ReportStatus
	call	report
done:
	mov	$231, %eax		# exit_group(0)
	xor	%edi, %edi
	syscall
forkfailed:
	neg	%eax
	movl	%eax, 4(%rsp)
	movl	$3, (%rsp)		# ReportFork
	call	report
	mov	$231, %eax
	mov	$126, %edi
	syscall
child:
	mov	8(%r12), %rdi		# execve(argv[1], &argv[1], envp)
	lea	8(%r12), %rsi
	mov	%r13, %rdx
	mov	$59, %eax
	syscall
	neg	%eax
	movl	%eax, 4(%rsp)
	movl	$2, (%rsp)		# ReportExec
	call	report
	mov	$231, %eax
	mov	$127, %edi
	syscall
report:					# write(4, record, 8), retried on EINTR
	mov	$1, %eax
	mov	$4, %edi
	lea	8(%rsp), %rsi		# the caller's record, above the return address
	mov	$8, %edx
	syscall
	cmp	$-4, %rax
	je	report
	ret
	.section .note.GNU-stack,"",@progbits
