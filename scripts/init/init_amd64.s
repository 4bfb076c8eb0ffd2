# rukh's containment init for linux/amd64: PID 1 of an invocation's PID
# namespace. argv: [rukh-init, program, args...]; envp is passed on.
# Descriptor 4 is the report pipe (kernel/initproto.go). It touches no
# mount: it may share the host's mount namespace.
#
# Started as rukh-slot it is a warm slot instead: descriptor 4 is a
# SOCK_SEQPACKET socket to rukh, and it serves one call after another
# (kernel/initproto.go, Slots).
	.equ	PAYLOAD_MAX, 131072	# SlotPayloadMax
	.equ	STRINGS_MAX, 4096	# SlotStringsMax
	.equ	WALL, 0x40000000	# __WALL; also MSG_CMSG_CLOEXEC

# The slot's memory, mapped once at %rbp (text stays read-only):
	.equ	MSG, 0			# struct msghdr
	.equ	IOV, 56			# struct iovec
	.equ	CTL, 72			# the call's SCM_RIGHTS: 4 descriptors at CTL+16
	.equ	REC, 136		# a record: kind, value
	.equ	STATUS, 144		# the program's wait status
	.equ	TABLE, 152		# dir, path, argv..., 0, env..., 0, 0
	.equ	BUF, TABLE+(STRINGS_MAX+4)*8
	.equ	MEM, BUF+PAYLOAD_MAX

	.text
	.globl _start
_start:
	mov	(%rsp), %rdi		# argc
	lea	8(%rsp), %r12		# argv
	lea	8(%r12,%rdi,8), %r13	# envp
	sub	$16, %rsp		# record: kind at 0(%rsp), value at 4(%rsp)
	test	%rdi, %rdi
	jz	done
	mov	(%r12), %rax		# argv[0] is "rukh-slot"? (rukh gives
	mov	$0x6f6c732d686b7572, %rcx	# "rukh-slo"; argv[0] is at least
	cmp	%rcx, (%rax)		# "rukh-init", as long)
	jne	1f
	cmpw	$0x0074, 8(%rax)	# "t" and its NUL
	je	slot
1:
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

# The slot: one call per message from rukh, forever.
slot:
	mov	$9, %eax		# mmap(0, MEM, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)
	xor	%edi, %edi
	mov	$MEM, %esi
	mov	$3, %edx
	mov	$0x22, %r10d
	mov	$-1, %r8
	xor	%r9d, %r9d
	syscall
	cmp	$-4095, %rax
	jae	bad
	mov	%rax, %rbp
	mov	$157, %eax		# prctl(PR_SET_DUMPABLE, 0): a program of the
	mov	$4, %edi		# slot cannot trace it without CAP_SYS_PTRACE
	xor	%esi, %esi		# (an exec makes the program dumpable again)
	syscall
	mov	$72, %eax		# fcntl(4, F_SETFD, FD_CLOEXEC): no program holds it
	mov	$4, %edi
	mov	$2, %esi
	mov	$1, %edx
	syscall
next:
	lea	IOV(%rbp), %rax
	lea	BUF(%rbp), %rcx
	mov	%rcx, (%rax)
	movq	$PAYLOAD_MAX, 8(%rax)
	lea	MSG(%rbp), %rsi
	movq	$0, (%rsi)		# no name
	movq	$0, 8(%rsi)
	mov	%rax, 16(%rsi)		# one iovec
	movq	$1, 24(%rsi)
	lea	CTL(%rbp), %rcx
	mov	%rcx, 32(%rsi)
	movq	$64, 40(%rsi)
	movl	$0, 48(%rsi)
	mov	$47, %eax		# recvmsg(4, &msg, MSG_CMSG_CLOEXEC)
	mov	$4, %edi
	mov	$WALL, %edx
	syscall
	cmp	$-4, %rax		# EINTR
	je	next
	test	%rax, %rax
	jle	done			# rukh closed its end (or is gone): exit
	mov	%rax, %r15		# the payload's length
	lea	MSG(%rbp), %rsi
	testl	$0x28, 48(%rsi)		# MSG_TRUNC, MSG_CTRUNC
	jnz	bad
	cmpq	$32, 40(%rsi)		# exactly one SCM_RIGHTS of 4 descriptors
	jne	bad
	lea	CTL(%rbp), %rcx
	cmpq	$32, (%rcx)
	jne	bad
	cmpl	$1, 8(%rcx)		# SOL_SOCKET
	jne	bad
	cmpl	$1, 12(%rcx)		# SCM_RIGHTS
	jne	bad
	cmp	$8, %r15		# argc, envc, then NUL-terminated strings
	jb	bad
	lea	BUF(%rbp), %rbx
	cmpb	$0, -1(%rbx,%r15)
	jne	bad
	mov	(%rbx), %r8d		# argc
	mov	4(%rbx), %r9d		# envc
	test	%r8, %r8
	jz	bad
	lea	2(%r8,%r9), %r10	# strings: dir, path, argv, env
	cmp	$STRINGS_MAX, %r10
	ja	bad
	lea	8(%rbx), %rsi		# the next string
	lea	(%rbx,%r15), %rdx	# the payload's end
	lea	TABLE(%rbp), %rdi	# the next table entry
	xor	%ecx, %ecx		# strings seen
	lea	2(%r8), %r11		# the first env string's index
str:
	cmp	%r10, %rcx
	je	strdone
	cmp	%r11, %rcx
	jne	1f
	movq	$0, (%rdi)		# argv's terminator
	add	$8, %rdi
1:
	cmp	%rdx, %rsi
	jae	bad
	mov	%rsi, (%rdi)
	add	$8, %rdi
	inc	%rcx
scan:
	cmp	%rdx, %rsi
	jae	bad
	cmpb	$0, (%rsi)
	lea	1(%rsi), %rsi		# keeps the flags
	jne	scan
	jmp	str
strdone:
	cmp	%rdx, %rsi		# nothing after the last string
	jne	bad
	movq	$0, (%rdi)		# argv's terminator when envc is 0, or envp's
	movq	$0, 8(%rdi)		# envp's terminator
	# vfork: the child runs in this memory, this process held until its
	# exec (or exit), so no copy of the slot's pages is made and torn
	# down per call. The child writes only REC and below the stack
	# pointer, which this process sets afresh before it reads them.
	mov	$58, %eax		# vfork
	syscall
	test	%rax, %rax
	js	slotforkfailed
	jz	slotchild
	mov	%rax, %r14		# the program's pid
	call	closefds
slotwait:
	mov	$61, %eax		# wait4(-1, &status, __WALL, 0)
	mov	$-1, %rdi
	lea	STATUS(%rbp), %rsi
	mov	$WALL, %edx
	xor	%r10d, %r10d
	syscall
	cmp	$-4, %rax		# EINTR
	je	slotwait
	test	%rax, %rax
	js	sweep			# ECHILD: cannot happen while the program lives
	cmp	%r14, %rax
	jne	slotwait
sweep:
	mov	$62, %eax		# kill(-1, SIGKILL): all else of the call, here
	mov	$-1, %rdi
	mov	$9, %esi
	syscall
slotreap:
	mov	$61, %eax		# wait4(-1, 0, __WALL, 0) until ECHILD
	mov	$-1, %rdi
	xor	%esi, %esi
	mov	$WALL, %edx
	xor	%r10d, %r10d
	syscall
	cmp	$-10, %rax		# ECHILD: only this init is left
	jne	slotreap
	mov	STATUS(%rbp), %eax
	movl	$1, REC(%rbp)		# ReportStatus: the call is over
	movl	%eax, REC+4(%rbp)
	call	send
	jmp	next
slotforkfailed:
	neg	%eax
	movl	%eax, REC+4(%rbp)
	movl	$3, REC(%rbp)		# ReportFork
	call	closefds
	call	send
	jmp	next
bad:					# not rukh's message: the slot ends
	mov	$231, %eax
	mov	$1, %edi
	syscall
slotchild:
	lea	CTL+16(%rbp), %rbx	# dup2(received[i], i) for i 0..3: received
	xor	%r15d, %r15d		# descriptors are 3 and up, and only the
dup:					# first can be 3, so none is overwritten
	mov	(%rbx,%r15,4), %edi	# before it is copied
	mov	%r15d, %esi
	mov	$33, %eax
	syscall
	test	%rax, %rax
	js	childfail
	inc	%r15
	cmp	$4, %r15
	jne	dup
	mov	$109, %eax		# setpgid(0, 0): a group of its own
	xor	%edi, %edi
	xor	%esi, %esi
	syscall
	test	%rax, %rax
	js	childfail
	movl	$6, REC(%rbp)		# ReportStarted: the kernel adds our pid
	movl	$0, REC+4(%rbp)
	call	send
	test	%rax, %rax
	js	childexit		# rukh hears of no start: it never ran
	mov	TABLE(%rbp), %rdi	# chdir(dir) when rukh gives one
	cmpb	$0, (%rdi)
	je	1f
	mov	$80, %eax
	syscall
	test	%rax, %rax
	js	childfail
1:
	mov	TABLE+8(%rbp), %rdi	# execve(path, argv, envp)
	lea	TABLE(%rbp), %rdx
	lea	16(%rdx), %rsi
	lea	24(%rdx,%r8,8), %rdx
	mov	$59, %eax
	syscall
childfail:
	neg	%eax
	movl	%eax, REC+4(%rbp)
	movl	$2, REC(%rbp)		# ReportExec
	call	send
childexit:
	mov	$231, %eax
	mov	$127, %edi
	syscall
closefds:				# close the received descriptors
	lea	CTL+16(%rbp), %rbx
	xor	%ecx, %ecx
1:
	mov	(%rbx,%rcx,4), %edi
	push	%rcx
	mov	$3, %eax
	syscall
	pop	%rcx
	inc	%rcx
	cmp	$4, %rcx
	jne	1b
	ret
send:					# sendto(4, rec, 8, MSG_NOSIGNAL, 0, 0), retried
	push	%r8			# on EINTR: rukh gone is an error, not
	push	%r9			# SIGPIPE (keeps argc and envc)
1:
	mov	$44, %eax
	mov	$4, %edi
	lea	REC(%rbp), %rsi
	mov	$8, %edx
	mov	$0x4000, %r10d
	xor	%r8d, %r8d
	xor	%r9d, %r9d
	syscall
	cmp	$-4, %rax
	je	1b
	pop	%r9
	pop	%r8
	ret
	.section .note.GNU-stack,"",@progbits
